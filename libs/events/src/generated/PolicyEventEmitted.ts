// Generated from schemas/PolicyEventEmitted.avsc by libs/events/src/generate-types.ts (make events). Do not edit.
/* eslint-disable @typescript-eslint/no-namespace */

export type PolicyEventEmitted = ChatgatewayEvents.PolicyEventEmitted;

export namespace ChatgatewayEvents {
    export const PolicyEventEmittedSchema = "{\"type\":\"record\",\"name\":\"PolicyEventEmitted\",\"namespace\":\"chatgateway.events\",\"doc\":\"A fact the policy engine derived itself (e.g. an automatic pause for review), published beside the decisions; replay derives it again.\",\"fields\":[{\"name\":\"event_id\",\"type\":\"string\"},{\"name\":\"correlation_id\",\"type\":\"string\",\"doc\":\"The operator command or source event this fact came from.\"},{\"name\":\"occurred_at\",\"type\":\"long\"},{\"name\":\"customer_id\",\"type\":\"string\"},{\"name\":\"instance_id\",\"type\":\"string\",\"doc\":\"Empty for customer-wide facts.\"},{\"name\":\"input_type\",\"type\":\"string\",\"doc\":\"The policy event type, e.g. PlanChanged, RecipientSuppressed, InstancePausedForReview.\"},{\"name\":\"payload\",\"type\":\"string\",\"doc\":\"The policy event as JSON, exactly as the decider folds it.\"}]}";
    export const PolicyEventEmittedName = "chatgateway.events.PolicyEventEmitted";
    /**
     * A fact the policy engine derived itself (e.g. an automatic pause for review), published beside the decisions; replay derives it again.
     */
    export interface PolicyEventEmitted {
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
