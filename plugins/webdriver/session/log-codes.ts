// The session log's vocabulary, as WebGrid's three tables list it: who logs
// (component), how bad it is (level) and what happened (code).

export const components = ['node', 'orchestrator', 'manager', 'proxy'] as const;
export type Component = (typeof components)[number];

export const levels = ['info', 'warn', 'fail'] as const;
export type Level = (typeof levels)[number];

/** Every code WebGrid documents, with the level its table gives it (and coord's EVENT). */
export const codes = {
  // node
  BOOT: 'info',
  DSTART: 'info',
  DALIVE: 'info',
  LSINIT: 'info',
  CLOSED: 'info',
  HALT: 'info',
  // coord: a client's Session Event API event (Selenium 4.41's POST se/event), its JSON as meta
  EVENT: 'info',
  DTIMEOUT: 'fail',
  DFAILURE: 'fail',
  STIMEOUT: 'fail',
  TERM: 'fail',
  // orchestrator
  SCHED: 'info',
  STARTFAIL: 'fail',
  // manager
  QUEUED: 'info',
  NALLOC: 'info',
  PENDING: 'info',
  NALIVE: 'info',
  CLEFT: 'warn',
  INVALIDCAP: 'fail',
  QUNAVAILABLE: 'fail',
  QTIMEOUT: 'fail',
  OTIMEOUT: 'fail',
  NTIMEOUT: 'fail',
} as const satisfies Record<string, Level>;

export type Code = keyof typeof codes;
export const codeNames = Object.keys(codes) as Code[];

/** One entry of a session's log. */
export interface LogEvent {
  component: Component;
  code: Code;
  meta?: string;
}
