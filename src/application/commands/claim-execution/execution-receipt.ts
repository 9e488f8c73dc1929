import type { ToolCall } from '../../../domain/conversation/tool-call.entity';
import type { ReceiptIdentity, ReceiptSigner, ReceiptStepUp } from '../../ports';
import { toolCallView } from '../../views/views';
import type { ExecutionClaim } from './claim-execution.command';
import { SecretArgumentsUnavailable, type SecretArguments } from '../../redaction/secret-arguments';

/**
 * The claim's answer for a call the agent now runs: the arguments to run and the receipt vouching for them.
 * Signed after commit, so a receipt never exists for a claim that rolled back.
 */
export async function executionClaim(
  receipts: ReceiptSigner,
  tenant: string,
  call: ToolCall,
  identity?: ReceiptIdentity,
  /** Opens the seal of secret arguments: the claim answers, and the receipt binds, the real arguments. */
  secrets?: SecretArguments,
): Promise<ExecutionClaim> {
  // A call with sealed secrets is never answered masked: without the opener the claim fails (fail closed).
  if (!secrets && call.snapshot().sealedArguments) throw new SecretArgumentsUnavailable();
  const args = secrets ? secrets.argumentsToRun(tenant, call) : call.argumentsToRun;
  const stepUp = receiptStepUps(call);
  const receipt = await receipts.sign(
    {
      tcid: call.id,
      conv: call.snapshot().conversationId,
      tool: call.toolName,
      args: receipts.digest(args),
      approvedBy: call.decision?.by.id ?? 'policy',
      tenant,
      ...(stepUp.length > 0 ? { stepUp } : {}),
      ...(call.preview ? { preview: call.preview.digest } : {}),
    },
    identity,
  );
  return { toolCall: toolCallView(call.snapshot()), arguments: args, receipt };
}

/** The passkeys the call's approvals were made with: each quorum member's, or the one approval's. */
function receiptStepUps(call: ToolCall): ReceiptStepUp[] {
  const made = call.approvals.length > 0 ? call.approvals : call.decision ? [call.decision] : [];
  return made.flatMap((a) =>
    a.stepUp
      ? [
          {
            by: a.by.id,
            method: 'passkey' as const,
            credentialId: a.stepUp.credentialId,
            aaguid: a.stepUp.aaguid,
            uv: true as const,
          },
        ]
      : [],
  );
}
