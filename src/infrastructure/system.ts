import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Clock, IdGenerator } from '../application/ports';

@Injectable()
export class SystemClock implements Clock {
  now(): Date {
    return new Date();
  }
}

@Injectable()
export class RandomIds implements IdGenerator {
  next(prefix: string): string {
    return `${prefix}_${randomUUID().replace(/-/g, '')}`;
  }
}
