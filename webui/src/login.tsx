// The login form: one password field; the controller decides the level (read or enable).

import { useState } from 'preact/hooks';

export function Login({ message, onSubmit }: { message: string; onSubmit(password: string): void }) {
  const [pw, setPw] = useState('');
  return (
    <main class="login" id="main">
      <form
        class="panel"
        onSubmit={(e) => {
          e.preventDefault();
          if (pw) onSubmit(pw);
        }}
      >
        <h1>mailsift</h1>
        <p class="muted">The controller asks for a password. The read password shows statistics and history; the enable password also lets you change thresholds and weights.</p>
        <label>
          Password
          <input type="password" name="password" autocomplete="current-password" value={pw} onInput={(e) => setPw(e.currentTarget.value)} required autofocus />
        </label>
        {message && (
          <p class="error" role="alert">
            {message}
          </p>
        )}
        <button type="submit" class="primary">
          Log in
        </button>
      </form>
    </main>
  );
}
