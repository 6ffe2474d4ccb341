/**
 * Whether a request carries any of a task's placeholders anywhere it could be read: its target
 * (URL-decoded), any header, or a Basic credential's decoded `user:password`. Wider than
 * findCredential on purpose: what it finds is refused or kept from a credential, never sent one.
 */

/** Whether `request`'s target or headers hold any of `placeholders`. */
export function carriesPlaceholder(
  request: { target: string; headers: Iterable<[string, string]> },
  placeholders: readonly string[],
): boolean {
  if (placeholders.length === 0) return false;
  const views = [request.target.toLowerCase(), decodeSafely(request.target).toLowerCase()];
  for (const [name, value] of request.headers) {
    views.push(`${name}: ${value}`.toLowerCase());
    const basic = /^\s*basic\s+(\S+)\s*$/i.exec(value);
    if (basic !== null) {
      try {
        views.push(atob(basic[1]).toLowerCase());
      } catch {
        // Not base64: seen as it is.
      }
    }
  }
  return placeholders.some((placeholder) => views.some((view) => view.includes(placeholder)));
}

/** Whether an HTTP/1 request head (its request line and header lines) holds any of `placeholders`. */
export function headCarriesPlaceholder(head: string, placeholders: readonly string[]): boolean {
  const lines = head.split(/\r?\n/);
  const target = lines[0] ?? "";
  const headers: [string, string][] = [];
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
    else if (line !== "") headers.push(["", line]);
  }
  return carriesPlaceholder({ target, headers }, placeholders);
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
