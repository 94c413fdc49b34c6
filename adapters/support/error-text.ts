// One line of text for any error a client library or the OS hands us, with a
// secret (the URL's password) masked wherever it might appear.

export function errorText(error: unknown, secret?: string): string {
  const text = rawText(error).replace(/\s+/g, ' ').trim() || 'unknown error';
  return secret ? text.split(secret).join('***') : text;
}

function rawText(error: unknown): string {
  // Node's happy-eyeballs connect (localhost → ::1 and 127.0.0.1) fails with an
  // AggregateError whose own message is empty; its parts say what happened.
  if (error instanceof AggregateError && error.errors.length > 0) {
    return [...new Set(error.errors.map((e) => rawText(e)))].join('; ');
  }
  if (error instanceof Error) return error.message || String((error as { code?: unknown }).code ?? error.name);
  return String(error);
}
