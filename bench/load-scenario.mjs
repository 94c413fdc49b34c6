// The bench's scenario: each user sends GET / back to back, as autocannon's
// connections do.
export default {
  params: { baseUrl: 'http://127.0.0.1:1' },
  steps: [{ name: 'get', run: (user) => user.http.get('/', { metric: 'GET /' }) }],
};
