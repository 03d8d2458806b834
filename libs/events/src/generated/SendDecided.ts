// Generated from schemas/SendDecided.avsc by libs/events/src/generate-types.ts (make events). Do not edit.
/* eslint-disable @typescript-eslint/no-namespace */

export type SendDecided = ChatgatewayEvents.SendDecided;

export namespace ChatgatewayEvents {
    export const DecisionSchema = "{\"type\":\"enum\",\"name\":\"Decision\",\"symbols\":[\"accepted\",\"rejected\"]}";
    export const DecisionName = "chatgateway.events.Decision";
    export type Decision = "accepted" | "rejected";
    export const RuleResultSchema = "{\"type\":\"enum\",\"name\":\"RuleResult\",\"symbols\":[\"pass\",\"fail\",\"skipped\"]}";
    export const RuleResultName = "chatgateway.events.RuleResult";
    export type RuleResult = "pass" | "fail" | "skipped";
    export const RuleOutcomeSchema = "{\"type\":\"record\",\"name\":\"RuleOutcome\",\"fields\":[{\"name\":\"rule\",\"type\":\"string\"},{\"name\":\"outcome\",\"type\":{\"type\":\"enum\",\"name\":\"RuleResult\",\"symbols\":[\"pass\",\"fail\",\"skipped\"]}},{\"name\":\"detail\",\"type\":[\"null\",\"string\"],\"default\":null,\"doc\":\"JSON object text with the rule's machine-readable details.\"}]}";
    export const RuleOutcomeName = "chatgateway.events.RuleOutcome";
    export interface RuleOutcome {
        rule: string;
        outcome: ChatgatewayEvents.RuleResult;
        /**
         * JSON object text with the rule's machine-readable details.
         *
         * Default: null
         */
        detail: null | string;
    }
    export const DispatchSchema = "{\"type\":\"record\",\"name\":\"Dispatch\",\"fields\":[{\"name\":\"instance_name\",\"type\":\"string\"},{\"name\":\"phone\",\"type\":\"string\"},{\"name\":\"text\",\"type\":\"string\"}]}";
    export const DispatchName = "chatgateway.events.Dispatch";
    export interface Dispatch {
        instance_name: string;
        phone: string;
        text: string;
    }
    export const SendDecidedSchema = "{\"type\":\"record\",\"name\":\"SendDecided\",\"namespace\":\"chatgateway.events\",\"doc\":\"The policy engine's decision on one SendRequested: an entry of the policy log.\",\"fields\":[{\"name\":\"event_id\",\"type\":\"string\"},{\"name\":\"correlation_id\",\"type\":\"string\"},{\"name\":\"occurred_at\",\"type\":\"long\"},{\"name\":\"customer_id\",\"type\":\"string\"},{\"name\":\"instance_id\",\"type\":\"string\"},{\"name\":\"message_id\",\"type\":\"string\"},{\"name\":\"log_id\",\"type\":\"long\",\"doc\":\"Policy-log entry id returned to the caller as log_id.\"},{\"name\":\"decision\",\"type\":{\"type\":\"enum\",\"name\":\"Decision\",\"symbols\":[\"accepted\",\"rejected\"]}},{\"name\":\"error_code\",\"type\":[\"null\",\"string\"],\"default\":null},{\"name\":\"error_message\",\"type\":[\"null\",\"string\"],\"default\":null},{\"name\":\"reasons\",\"type\":{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"RuleOutcome\",\"fields\":[{\"name\":\"rule\",\"type\":\"string\"},{\"name\":\"outcome\",\"type\":{\"type\":\"enum\",\"name\":\"RuleResult\",\"symbols\":[\"pass\",\"fail\",\"skipped\"]}},{\"name\":\"detail\",\"type\":[\"null\",\"string\"],\"default\":null,\"doc\":\"JSON object text with the rule's machine-readable details.\"}]}}},{\"name\":\"policy_version\",\"type\":\"string\"},{\"name\":\"recipient\",\"type\":\"string\",\"doc\":\"Normalised recipient.\"},{\"name\":\"message_purpose\",\"type\":\"string\"},{\"name\":\"message_digest\",\"type\":\"string\",\"doc\":\"SHA-256 hex of the message body.\"},{\"name\":\"dispatch\",\"type\":[\"null\",{\"type\":\"record\",\"name\":\"Dispatch\",\"fields\":[{\"name\":\"instance_name\",\"type\":\"string\"},{\"name\":\"phone\",\"type\":\"string\"},{\"name\":\"text\",\"type\":\"string\"}]}],\"default\":null,\"doc\":\"What the delivery stage sends; present only when accepted.\"},{\"name\":\"partition_chain\",\"type\":\"int\",\"default\":-1,\"doc\":\"The partition whose hash chain this entry belongs to.\"},{\"name\":\"prev_hash\",\"type\":\"string\",\"default\":\"\",\"doc\":\"entry_hash of the previous entry of the same partition chain.\"},{\"name\":\"entry_hash\",\"type\":\"string\",\"default\":\"\",\"doc\":\"SHA-256 over prev_hash and this entry's canonical fields: any edit or deletion breaks the chain.\"}]}";
    export const SendDecidedName = "chatgateway.events.SendDecided";
    /**
     * The policy engine's decision on one SendRequested: an entry of the policy log.
     */
    export interface SendDecided {
        event_id: string;
        correlation_id: string;
        occurred_at: number;
        customer_id: string;
        instance_id: string;
        message_id: string;
        /**
         * Policy-log entry id returned to the caller as log_id.
         */
        log_id: number;
        decision: ChatgatewayEvents.Decision;
        /**
         * Default: null
         */
        error_code: null | string;
        /**
         * Default: null
         */
        error_message: null | string;
        reasons: ChatgatewayEvents.RuleOutcome[];
        policy_version: string;
        /**
         * Normalised recipient.
         */
        recipient: string;
        message_purpose: string;
        /**
         * SHA-256 hex of the message body.
         */
        message_digest: string;
        /**
         * What the delivery stage sends; present only when accepted.
         *
         * Default: null
         */
        dispatch: null | ChatgatewayEvents.Dispatch;
        /**
         * The partition whose hash chain this entry belongs to.
         *
         * Default: -1
         */
        partition_chain: number;
        /**
         * entry_hash of the previous entry of the same partition chain.
         *
         * Default: ""
         */
        prev_hash: string;
        /**
         * SHA-256 over prev_hash and this entry's canonical fields: any edit or deletion breaks the chain.
         *
         * Default: ""
         */
        entry_hash: string;
    }
}
