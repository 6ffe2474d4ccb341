/** Timestamps in grants and on the command line: RFC 3339 with a zone, checked field by field. */

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Parses an RFC 3339 timestamp with a zone (`2027-01-01T00:00:00.000Z`) into a Date, or returns
 * null when the text is not one or names a day or time that does not exist.
 */
export function parseTimestamp(text: string): Date | null {
  const match = RFC3339.exec(text);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const local = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  const exists = local.getUTCFullYear() === year && local.getUTCMonth() === month - 1 &&
    local.getUTCDate() === day && local.getUTCHours() === hour &&
    local.getUTCMinutes() === minute && local.getUTCSeconds() === second;
  if (!exists) return null;
  const zone = match[8];
  if (zone !== "Z") {
    const [zh, zm] = zone.slice(1).split(":").map(Number);
    if (zh > 23 || zm > 59) return null;
  }
  const parsed = Date.parse(text);
  return Number.isNaN(parsed) ? null : new Date(parsed);
}
