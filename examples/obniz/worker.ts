// The same worker in TypeScript. Deno runs it as is; the compiled coord on
// Node transpiles it as it loads (the typescript package must be installed).
//   npx coord run --plugin obniz --set obniz.worker=examples/obniz/worker.ts --set obniz.devices=examples/obniz/devices.yaml
interface Device {
  id: string;
  configs?: { room?: string; intervalSeconds?: number };
}

interface App {
  instanceName: string;
  logger: { info(msg: string, fields?: Record<string, unknown>): void };
}

export default class TemperatureWorker {
  private readings = 0;

  constructor(private readonly device: Device, private readonly app: App) {}

  async onStart(): Promise<void> {
    this.app.logger.info(`watching ${this.device.configs?.room ?? 'somewhere'} from ${this.app.instanceName}`);
  }

  async onLoop(): Promise<void> {
    this.readings += 1;
  }

  async onRequest(key: string): Promise<string> {
    return key === 'readings' ? String(this.readings) : '';
  }

  async onEnd(): Promise<void> {
    this.app.logger.info(`stopped after ${this.readings} loops`);
  }
}
