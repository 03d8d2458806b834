// Generated from schemas/PolicyInputRecorded.avsc by libs/events/src/generate-types.ts (make events). Do not edit.
/* eslint-disable @typescript-eslint/no-namespace */

export type PolicyInputRecorded = ChatgatewayEvents.PolicyInputRecorded;

export namespace ChatgatewayEvents {
    export const PolicyInputRecordedSchema = "{\"type\":\"record\",\"name\":\"PolicyInputRecorded\",\"namespace\":\"chatgateway.events\",\"doc\":\"An input that can change policy decisions (operator action, opt-out, delivery outcome), appended to the customer's stream in order with its sends.\",\"fields\":[{\"name\":\"event_id\",\"type\":\"string\"},{\"name\":\"correlation_id\",\"type\":\"string\",\"doc\":\"The operator command or source event this fact came from.\"},{\"name\":\"occurred_at\",\"type\":\"long\"},{\"name\":\"customer_id\",\"type\":\"string\"},{\"name\":\"instance_id\",\"type\":\"string\",\"doc\":\"Empty for customer-wide facts.\"},{\"name\":\"input_type\",\"type\":\"string\",\"doc\":\"The policy event type, e.g. PlanChanged, RecipientSuppressed, InstancePausedForReview.\"},{\"name\":\"payload\",\"type\":\"string\",\"doc\":\"The policy event as JSON, exactly as the decider folds it.\"}]}";
    export const PolicyInputRecordedName = "chatgateway.events.PolicyInputRecorded";
    /**
     * An input that can change policy decisions (operator action, opt-out, delivery outcome), appended to the customer's stream in order with its sends.
     */
    export interface PolicyInputRecorded {
        event_id: string;
        /**
         * The operator command or source event this fact came from.
         */
        correlation_id: string;
        occurred_at: number;
        customer_id: string;
        /**
         * Empty for customer-wide facts.
         */
        instance_id: string;
        /**
         * The policy event type, e.g. PlanChanged, RecipientSuppressed, InstancePausedForReview.
         */
        input_type: string;
        /**
         * The policy event as JSON, exactly as the decider folds it.
         */
        payload: string;
    }
}
