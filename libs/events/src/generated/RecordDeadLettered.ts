// Generated from schemas/RecordDeadLettered.avsc by libs/events/src/generate-types.ts (make events). Do not edit.
/* eslint-disable @typescript-eslint/no-namespace */

export type RecordDeadLettered = ChatgatewayEvents.RecordDeadLettered;

export namespace ChatgatewayEvents {
    export const RecordDeadLetteredSchema = "{\"type\":\"record\",\"name\":\"RecordDeadLettered\",\"namespace\":\"chatgateway.events\",\"doc\":\"A record a stage could not process after a bounded number of tries: the stage moved past it and keeps it here, whole, to be retried or discarded by an operator (gatewayctl dlq).\",\"fields\":[{\"name\":\"event_id\",\"type\":\"string\",\"doc\":\"The dead letter's id (derived from the stage and the record's position, so a redelivered batch yields the same id).\"},{\"name\":\"correlation_id\",\"type\":\"string\",\"doc\":\"The record's correlation-id header, or the dead letter's id.\"},{\"name\":\"occurred_at\",\"type\":\"long\",\"doc\":\"When the stage gave the record up (epoch ms).\"},{\"name\":\"customer_id\",\"type\":\"string\",\"doc\":\"The record's key (the customer), or empty.\"},{\"name\":\"instance_id\",\"type\":\"string\",\"doc\":\"Empty.\"},{\"name\":\"stage\",\"type\":\"string\",\"doc\":\"The consumer group's name without the topic prefix, e.g. policy, delivery.\"},{\"name\":\"error\",\"type\":\"string\",\"doc\":\"The error's name, code and message, phone numbers masked, shortened.\"},{\"name\":\"tries\",\"type\":\"int\"},{\"name\":\"source_topic\",\"type\":\"string\"},{\"name\":\"source_partition\",\"type\":\"int\"},{\"name\":\"source_offset\",\"type\":\"string\",\"doc\":\"Decimal.\"},{\"name\":\"source_timestamp\",\"type\":\"string\",\"doc\":\"The record's broker timestamp (epoch ms, decimal).\"},{\"name\":\"source_key\",\"type\":[\"null\",\"string\"],\"default\":null},{\"name\":\"source_value\",\"type\":[\"null\",\"bytes\"],\"default\":null},{\"name\":\"source_headers\",\"type\":{\"type\":\"map\",\"values\":\"string\"}}]}";
    export const RecordDeadLetteredName = "chatgateway.events.RecordDeadLettered";
    /**
     * A record a stage could not process after a bounded number of tries: the stage moved past it and keeps it here, whole, to be retried or discarded by an operator (gatewayctl dlq).
     */
    export interface RecordDeadLettered {
        /**
         * The dead letter's id (derived from the stage and the record's position, so a redelivered batch yields the same id).
         */
        event_id: string;
        /**
         * The record's correlation-id header, or the dead letter's id.
         */
        correlation_id: string;
        /**
         * When the stage gave the record up (epoch ms).
         */
        occurred_at: number;
        /**
         * The record's key (the customer), or empty.
         */
        customer_id: string;
        /**
         * Empty.
         */
        instance_id: string;
        /**
         * The consumer group's name without the topic prefix, e.g. policy, delivery.
         */
        stage: string;
        /**
         * The error's name, code and message, phone numbers masked, shortened.
         */
        error: string;
        tries: number;
        source_topic: string;
        source_partition: number;
        /**
         * Decimal.
         */
        source_offset: string;
        /**
         * The record's broker timestamp (epoch ms, decimal).
         */
        source_timestamp: string;
        /**
         * Default: null
         */
        source_key: null | string;
        /**
         * Default: null
         */
        source_value: null | Buffer;
        source_headers: {
            [index: string]: string;
        };
    }
}
