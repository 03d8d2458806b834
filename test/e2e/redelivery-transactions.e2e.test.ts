import { redeliveryCases } from './redelivery-cases.ts';

// The same kill-and-restart cases with KAFKA_EXACTLY_ONCE=transactions.
redeliveryCases('transactions');
