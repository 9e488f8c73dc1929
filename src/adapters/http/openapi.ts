import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

/** The OpenAPI document at /openapi.json and its viewer at /docs. */
export function setupOpenApi(app: INestApplication): void {
  const doc = new DocumentBuilder()
    .setTitle('Tollgate')
    .setDescription('Approval service for AI-agent tool calls. Errors are RFC 9457 problems with a stable `code`.')
    .setVersion('1')
    .addBearerAuth()
    .build();
  SwaggerModule.setup('docs', app, () => SwaggerModule.createDocument(app, doc), { jsonDocumentUrl: 'openapi.json', raw: ['json'] });
}
