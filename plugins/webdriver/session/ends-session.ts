// The command that ends a session: the proxy stops routing it, the node ends with it.

/** DELETE /session/{id} (`rest`: the path after /session/{id}, without the query). */
export function endsSession(method: string, rest: string): boolean {
  return method === 'DELETE' && (rest === '' || rest === '/');
}
