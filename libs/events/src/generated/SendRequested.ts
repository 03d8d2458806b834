// Generated from schemas/SendRequested.avsc by libs/events/src/generate-types.ts (make events). Do not edit.
/* eslint-disable @typescript-eslint/no-namespace */

export type SendRequested = ChatgatewayEvents.SendRequested;

export namespace ChatgatewayEvents {
    export const SendSourceSchema = "{\"type\":\"enum\",\"name\":\"SendSource\",\"symbols\":[\"api\",\"pbx\"]}";
    export const SendSourceName = "chatgateway.events.SendSource";
    export type SendSource = "api" | "pbx";
    export const SendRequestedSchema = "{\"type\":\"record\",\"name\":\"SendRequested\",\"namespace\":\"chatgateway.events\",\"doc\":\"A customer asked to send one message (API or PBX). The command that the policy engine decides on.\",\"fields\":[{\"name\":\"event_id\",\"type\":\"string\"},{\"name\":\"correlation_id\",\"type\":\"string\",\"doc\":\"The command id; every later event about this send carries it.\"},{\"name\":\"occurred_at\",\"type\":\"long\",\"doc\":\"Unix epoch milliseconds.\"},{\"name\":\"customer_id\",\"type\":\"string\"},{\"name\":\"instance_id\",\"type\":\"string\"},{\"name\":\"instance_name\",\"type\":\"string\"},{\"name\":\"message_id\",\"type\":\"string\",\"doc\":\"Gateway message id returned to the caller.\"},{\"name\":\"phone\",\"type\":\"string\",\"doc\":\"Recipient as given by the caller.\"},{\"name\":\"message\",\"type\":\"string\"},{\"name\":\"message_purpose\",\"type\":\"string\"},{\"name\":\"source\",\"type\":{\"type\":\"enum\",\"name\":\"SendSource\",\"symbols\":[\"api\",\"pbx\"]}},{\"name\":\"idempotency_key\",\"type\":[\"null\",\"string\"],\"default\":null}]}";
    export const SendRequestedName = "chatgateway.events.SendRequested";
    /**
     * A customer asked to send one message (API or PBX). The command that the policy engine decides on.
     */
    export interface SendRequested {
        event_id: string;
        /**
         * The command id; every later event about this send carries it.
         */
        correlation_id: string;
        /**
         * Unix epoch milliseconds.
         */
        occurred_at: number;
        customer_id: string;
        instance_id: string;
        instance_name: string;
        /**
         * Gateway message id returned to the caller.
         */
        message_id: string;
        /**
         * Recipient as given by the caller.
         */
        phone: string;
        message: string;
        message_purpose: string;
        source: ChatgatewayEvents.SendSource;
        /**
         * Default: null
         */
        idempotency_key: null | string;
    }
}
