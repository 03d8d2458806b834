import { createRuntime, onShutdown, startOpsServer } from '@gw/runtime';
import { startPolicyService } from './service.ts';

const runtime = await createRuntime('policy');
await startPolicyService(runtime);
const ops = await startOpsServer(runtime, runtime.config.policy.host, runtime.config.policy.port);
runtime.logger.info({ port: runtime.config.policy.port }, 'policy service started');
onShutdown(runtime.logger, async () => {
  await ops.close();
  await runtime.close();
});
