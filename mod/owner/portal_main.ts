/** The CLI role's side of `gurt portal`: prints the link and how long it lasts. */
import { loginLink } from "../portal/mod.ts";

/** Prints a fresh one-time sign-in link. */
export default async function main(args: { home: string }): Promise<number> {
  console.log(await loginLink(args.home, new Date()));
  console.error("gurt portal: the link signs in once, within 10 minutes; keep it to yourself");
  return 0;
}
