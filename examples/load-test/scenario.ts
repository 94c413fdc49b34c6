// A complete load-test scenario: run it with
//   coord load run --scenario examples/load-test/scenario.ts --users 50 --spawn-rate 10 --duration 30s \
//     --param baseUrl=http://127.0.0.1:8080 --threshold 'p95<200ms' --threshold 'errors<1%'
// (a .ts scenario needs no TypeScript install: coord strips its types as it loads).
import type { Scenario } from '../../plugins/load-test/scenario.ts';

interface Params {
  baseUrl: string;
  /** Largest server-side delay the item pages ask for, in ms. */
  maxDelayMs: number;
  [key: string]: unknown;
}

interface Account {
  login: string;
  password: string;
}

const scenario: Scenario<Params> = {
  name: 'shop',
  // Init parameters: defaults here, overridden per test with --param key=value.
  params: { baseUrl: 'http://127.0.0.1:8080', maxDelayMs: 20 },
  // Built once per test on the orchestrator; each account is held by at most one user at a time, across all workers.
  resources: {
    accounts: { count: 100, create: (i) => ({ login: `user${i}`, password: `secret${i}` }) },
  },
  // Runs when a user starts: take an account and log in.
  async onStart(user) {
    const account = await user.acquire<Account>('accounts');
    if (!account) throw new Error('no free account');
    user.state.account = account;
    await user.http.post(`/login?user=${account.data.login}`, { json: account.data, metric: 'POST /login' });
  },
  // Runs when a user stops (after its last step): log out and give the account back.
  async onStop(user) {
    const account = user.state.account as Parameters<typeof user.release>[0] | undefined;
    if (!account) return;
    await user.http.post(`/logout?user=${(account.data as Account).login}`, { metric: 'POST /logout' });
    await user.release(account);
  },
  steps: [
    // Picked three times as often as 'item'.
    {
      name: 'list',
      weight: 3,
      run: (user) => user.http.get('/items', { metric: 'GET /items' }),
    },
    {
      name: 'item',
      weight: 1,
      timeout: '2s',
      async run(user) {
        const delay = Math.floor(Math.random() * user.params.maxDelayMs);
        const res = await user.http.get(`/items/${user.id}?delay=${delay}`, { metric: 'GET /items/:id' });
        if (res.ok && res.body.length === 0) user.record('empty item', 0, 'empty body');
      },
    },
    // Paced: at most once every 1 to 2 seconds per user; its time is a custom metric.
    {
      name: 'checkout',
      every: '1..2s',
      async run(user) {
        const started = performance.now();
        await user.http.post('/cart', { json: { item: user.id }, metric: 'POST /cart' });
        await user.http.post('/checkout', { metric: 'POST /checkout', expect: [200, 201] });
        user.record('checkout flow', performance.now() - started);
      },
    },
  ],
};

export default scenario;
