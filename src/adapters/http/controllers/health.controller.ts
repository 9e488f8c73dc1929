import { Controller, Get, Res, ServiceUnavailableException } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import type { FastifyReply } from 'fastify';
import { DataSource } from 'typeorm';
import { databaseReadiness } from '../../../infrastructure/database/readiness';
import { Public } from '../auth';
import { HealthCheckView } from '../../api/dto/views.dto';

/** Liveness says the process serves; readiness that the database answers and every migration is applied. */
@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly dataSource: DataSource,
  ) {}

  @Get('live')
  @Public()
  @ApiOperation({
    operationId: 'getLiveness',
    summary: 'Liveness probe',
    description: 'No token, never rate-limited: 200 while the process serves.',
    security: [],
  })
  @ApiOkResponse({ type: HealthCheckView, example: { status: 'ok', info: {}, error: {}, details: {} } })
  live() {
    return this.health.check([]);
  }

  @Get('ready')
  @Public()
  @ApiOperation({
    operationId: 'getReadiness',
    summary: 'Readiness probe',
    description:
      'No token, never rate-limited: 200 when the database answers and every migration is applied, else 503 saying which.',
    security: [],
  })
  @ApiOkResponse({
    type: HealthCheckView,
    example: { status: 'ok', info: { database: { status: 'up' } }, error: {}, details: { database: { status: 'up' } } },
  })
  @ApiServiceUnavailableResponse({
    type: HealthCheckView,
    description: 'Not ready: the database is away, or migrations are pending',
    example: {
      status: 'error',
      info: {},
      error: { database: { status: 'down', message: 'migrations are pending: run `npm run migrate`' } },
      details: { database: { status: 'down', message: 'migrations are pending: run `npm run migrate`' } },
    },
  })
  async ready(@Res({ passthrough: true }) res: FastifyReply) {
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
    const r = await databaseReadiness(this.dataSource);
    return r.ready ? check.up() : check.down({ message: r.reason });
  }
}
