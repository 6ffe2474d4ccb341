/** The frame of every portal page: skip link, site navigation, the page's heading and content. */
import type { Child } from "hono/jsx";

/** The pages in the navigation, in order. */
export const PAGES = [
  { path: "/approvals", name: "Approvals" },
  { path: "/tasks", name: "Tasks" },
  { path: "/apps", name: "Apps" },
  { path: "/keys", name: "Accounts & Keys" },
  { path: "/grants", name: "Grants" },
  { path: "/audit", name: "Audit" },
] as const;

/** The hidden CSRF field every form of a signed-in page carries. */
export function Csrf(props: { token: string }): Child {
  return <input type="hidden" name="csrf" value={props.token} />;
}

/** A whole page. `csrf` is null on pages seen before signing in. */
export function Layout(
  props: { title: string; current: string | null; csrf: string | null; children?: Child },
): Child {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="same-origin" />
        <title>{`${props.title} · gurt`}</title>
        <link rel="stylesheet" href="/static/portal.css" />
        <script src="/static/portal.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        <header>
          <p>gurt · this box's owner portal</p>
          {props.csrf === null ? null : (
            <nav aria-label="Portal">
              <ul>
                {PAGES.map((page) => (
                  <li>
                    <a
                      href={page.path}
                      aria-current={page.path === props.current ? "page" : undefined}
                    >
                      {page.name}
                    </a>
                  </li>
                ))}
                <li>
                  <form method="post" action="/logout">
                    <Csrf token={props.csrf} />
                    <button type="submit">Sign out</button>
                  </form>
                </li>
              </ul>
            </nav>
          )}
        </header>
        <main id="main" tabindex={-1}>
          <h1>{props.title}</h1>
          {props.children}
        </main>
      </body>
    </html>
  );
}

/** A status line after an action, announced to screen readers. */
export function Notice(props: { text: string | null; error?: boolean }): Child {
  if (props.text === null) return null;
  return (
    <p class={props.error === true ? "error" : "notice"} role={props.error ? "alert" : "status"}>
      {props.text}
    </p>
  );
}
