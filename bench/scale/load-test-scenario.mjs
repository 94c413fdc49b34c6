// The scale bench's users (bench/scale/load-test.mjs): each sends GET / to the
// counting target once every 5 to 15 s (10 s on average, the moments spread so
// 10,000 users do not fire together): 1,000 requests a second at 100 workers
// of 100 users. Paced, not back to back: the bench measures what coordinating
// the fleet costs, and 10,000 users firing as fast as they can would measure
// only how this machine's two cores are shared (a paced request costs a worker
// far more CPU than a back-to-back one, its timers and wake-ups: at 0.5
// requests a second per user, 100 workers overloaded it).
export default {
  params: { baseUrl: 'http://127.0.0.1:1' },
  steps: [{ name: 'get', every: '5..15s', run: (user) => user.http.get('/', { metric: 'GET /' }) }],
};
