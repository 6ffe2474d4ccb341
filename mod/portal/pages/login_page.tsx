/** The sign-in page and the error page: seen before (or instead of) a signed-in page. */
import type { Child } from "hono/jsx";
import { Layout } from "./layout.tsx";

/** Sign in with the one-time code from `gurt portal`'s link, or with the owner token. */
export function LoginPage(props: { code: string | null; error: string | null }): Child {
  return (
    <Layout title="Sign in" current={null} csrf={null}>
      {props.error === null ? null : <p class="error" role="alert">{props.error}</p>}
      {props.code !== null
        ? (
          <form method="post" action="/login">
            <input type="hidden" name="code" value={props.code} />
            <p>This one-time link signs you in as the owner of this box.</p>
            <button type="submit">Sign in</button>
          </form>
        )
        : (
          <form method="post" action="/login">
            <p>
              Run <code>gurt portal</code>{" "}
              on the box and open the link it prints, or paste the owner token from the box home's
              {" "}
              <code>portal/owner.token</code>.
            </p>
            <label>
              Owner token
              <input type="password" name="token" required autocomplete="off" size={70} />
            </label>
            <p>
              <button type="submit">Sign in</button>
            </p>
          </form>
        )}
    </Layout>
  );
}

/** A refusal or failure, as a page. */
export function ErrorPage(props: { status: number; message: string; signedIn: boolean }): Child {
  return (
    <Layout title={props.status === 404 ? "Not found" : "Refused"} current={null} csrf={null}>
      <p class="error" role="alert">{props.message}</p>
      <p>
        <a href={props.signedIn ? "/approvals" : "/login"}>
          {props.signedIn ? "Back to the approvals" : "Sign in"}
        </a>
      </p>
    </Layout>
  );
}
