import { redeliveryCases } from './redelivery-cases.ts';

// The default mode (KAFKA_EXACTLY_ONCE=idempotent); redelivery-transactions.e2e.test.ts runs the same cases with transactions.
redeliveryCases('idempotent');
