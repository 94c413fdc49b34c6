// The same worker in TypeScript. Deno runs it as is; the compiled coord on
// Node transpiles it as it loads (the typescript package must be installed).
//   npx coord run --plugin obniz --set obniz.worker=examples/obniz/worker.ts --set obniz.devices=examples/obniz/devices.yaml
/** A device as obniz-app-sdk's DeviceInfo has it: configs is JSON text. */
interface DeviceInfo {
  id: string;
  hardware: string;
  configs: string;
}

interface Configs {
  room?: string;
  intervalSeconds?: number;
}

interface App {
  instanceName: string;
  logger: { info(msg: string, fields?: Record<string, unknown>): void };
}

export default class TemperatureWorker {
  private readonly configs: Configs;
  private readings = 0;
  private temperature?: number;

  constructor(private readonly device: DeviceInfo, private readonly app: App) {
    this.configs = JSON.parse(device.configs) as Configs;
  }

  async onStart(): Promise<void> {
    this.app.logger.info(`watching the ${this.configs.room ?? 'unnamed room'} from ${this.app.instanceName}`);
  }

  async onLoop(): Promise<void> {
    // a stand-in reading; with the obniz package and an appToken, read a sensor instead
    this.readings += 1;
    this.temperature = 20 + (this.readings % 10) / 10;
  }

  async onRequest(key: string): Promise<string> {
    if (key === 'temperature') return this.temperature === undefined ? '' : this.temperature.toFixed(1);
    return key === 'readings' ? String(this.readings) : '';
  }

  async onEnd(): Promise<void> {
    this.app.logger.info(`stopped after ${this.readings} loops`);
  }
}
