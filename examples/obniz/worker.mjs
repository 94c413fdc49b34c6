// A worker: one instance per installed device, on whichever slave the device
// is assigned to. Every hook is optional.
//   npx coord run --plugin obniz --set obniz.worker=examples/obniz/worker.mjs --set obniz.devices=examples/obniz/devices.yaml
export default class TemperatureWorker {
  constructor(device, app) {
    this.device = device; // { id, configs, … } as the device list gives it
    this.log = app.logger; // lines carry obnizId
    this.readings = 0;
  }

  async onInstall() {
    this.log.info('installed: first start of this device anywhere');
  }

  async onStart() {
    this.log.info(`started on ${this.device.id} with ${JSON.stringify(this.device.configs ?? {})}`);
  }

  async onLoop() {
    // about every loopInterval (1 s); a throw is logged once and the loop goes on
    this.readings += 1;
  }

  async onRequest(key) {
    // answers app.request(key) / `coord obniz request KEY`
    return key === 'readings' ? String(this.readings) : '';
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
