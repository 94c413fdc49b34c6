// A worker's health for worker:<id>:status: CPU used by this process since the
// last sample, and its current RSS (vikhry's tool reports the peak instead).
import { totalmem } from 'node:os';

export class SystemStats {
  private lastCpu = process.cpuUsage();
  private lastAt = performance.now();

  sample(): { cpu_percent: number; rss_bytes: number; memory_percent: number; total_ram_bytes: number } {
    const cpu = process.cpuUsage(this.lastCpu);
    const now = performance.now();
    const wallUs = Math.max(1, (now - this.lastAt) * 1000);
    this.lastCpu = process.cpuUsage();
    this.lastAt = now;
    const rss = process.memoryUsage.rss();
    const total = totalmem();
    return {
      cpu_percent: Math.round(((cpu.user + cpu.system) / wallUs) * 1000) / 10,
      rss_bytes: rss,
      memory_percent: Math.round((rss / total) * 10000) / 100,
      total_ram_bytes: total,
    };
  }
}
