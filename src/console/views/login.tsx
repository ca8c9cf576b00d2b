import { Page } from './layout.js';

export function LoginPage({ failed }: { failed: boolean }) {
  return (
    <Page title="Sign in" section="login">
      <form method="post" action="/console/login" class="card login">
        <p>Enter the admin token (ADMIN_TOKEN of the worker).</p>
        {failed && <p class="error">That token is not right.</p>}
        <label>
          Admin token{' '}
          <input type="password" name="token" autocomplete="current-password" required autofocus />
        </label>
        <button type="submit">Sign in</button>
      </form>
    </Page>
  );
}
