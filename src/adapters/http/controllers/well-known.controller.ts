import { Controller, Get, Header, Inject } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { RECEIPTS, ReceiptSigner } from '../../../application/ports';
import { Public } from '../auth';

@ApiTags('receipts')
@Controller('.well-known')
export class WellKnownController {
  constructor(@Inject(RECEIPTS) private readonly receipts: ReceiptSigner) {}

  /** Public keys of execution receipts, so a tool's backend can check approval without trusting the agent. */
  @Get('jwks.json')
  @Public()
  @Header('Cache-Control', 'public, max-age=300')
  jwks() {
    return this.receipts.jwks();
  }
}
