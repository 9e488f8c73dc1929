import { Controller, Get, Res, ServiceUnavailableException } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { Public } from '../auth';

/** Liveness says the process serves; readiness that the database answers and every migration is applied. */
@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthCheckService, private readonly indicators: HealthIndicatorService, private readonly dataSource: DataSource) {}

  @Get('live')
  @Public()
  live() {
    return this.health.check([]);
  }

  @Get('ready')
  @Public()
  async ready(@Res({ passthrough: true }) res: Response) {
    try {
      return await this.health.check([() => this.database()]);
    } catch (e) {
      if (!(e instanceof ServiceUnavailableException)) throw e;
      res.status(503);
      return e.getResponse();
    }
  }

  private async database() {
    const check = this.indicators.check('database');
    try {
      await withTimeout(this.dataSource.query('SELECT 1'), 2000);
      const pending = await withTimeout(this.dataSource.showMigrations(), 2000);
      return pending ? check.down({ message: 'migrations are pending: run `npm run migrate`' }) : check.up();
    } catch (e) {
      return check.down({ message: (e as Error).message });
    }
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([p, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer));
}
