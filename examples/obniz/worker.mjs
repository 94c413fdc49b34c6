// A worker: one instance per installed device, on whichever slave the device
// is assigned to. Every hook is optional.
//   npx coord run --plugin obniz --set obniz.worker=examples/obniz/worker.mjs --set obniz.devices=examples/obniz/devices.yaml
//   npx coord obniz request temperature          (another terminal, with --redis when not standalone)
export default class TemperatureWorker {
  constructor(device, app) {
    // { id, hardware, configs, … } as obniz-app-sdk's DeviceInfo: configs is JSON text
    this.device = device;
    this.configs = JSON.parse(device.configs);
    this.log = app.logger; // lines carry obnizId
    this.readings = 0;
    this.temperature = undefined;
  }

  async onInstall() {
    this.log.info('installed: first start of this device anywhere');
  }

  async onStart() {
    this.log.info(`started on ${this.device.id} (${this.device.hardware}) in the ${this.configs.room ?? 'unnamed room'}`);
  }

  async onLoop() {
    // about every loopInterval (1 s); a throw is logged once and the loop goes on.
    // A stand-in reading; with the obniz package and an appToken, read a sensor on this.obniz instead.
    this.readings += 1;
    this.temperature = 20 + (this.readings % 10) / 10;
  }

  async onRequest(key) {
    // answers app.request(key) / `coord obniz request KEY`
    if (key === 'temperature') return this.temperature === undefined ? '' : this.temperature.toFixed(1);
    if (key === 'readings') return String(this.readings);
    return '';
  }

  // with the obniz package installed and an appToken set: the device connection
  async onObnizConnect(obniz) {
    obniz.display?.print?.('hello from coord');
  }

  async onUnInstall() {
    this.log.info('uninstalled: removed from the device list');
  }

  async onEnd() {
    this.log.info(`stopped after ${this.readings} loops`);
  }
}
