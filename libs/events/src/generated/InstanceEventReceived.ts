// Generated from schemas/InstanceEventReceived.avsc by libs/events/src/generate-types.ts (make events). Do not edit.
/* eslint-disable @typescript-eslint/no-namespace */

export type InstanceEventReceived = ChatgatewayEvents.InstanceEventReceived;

export namespace ChatgatewayEvents {
    export const InstanceEventReceivedSchema = "{\"type\":\"record\",\"name\":\"InstanceEventReceived\",\"namespace\":\"chatgateway.events\",\"doc\":\"An authenticated webhook event from an instance manager (Evolution API v2), as received. The manager's apikey is removed from the envelope before it is recorded.\",\"fields\":[{\"name\":\"event_id\",\"type\":\"string\"},{\"name\":\"correlation_id\",\"type\":\"string\",\"doc\":\"Its own event id.\"},{\"name\":\"occurred_at\",\"type\":\"long\",\"doc\":\"When the gateway received it (epoch ms).\"},{\"name\":\"customer_id\",\"type\":\"string\"},{\"name\":\"instance_id\",\"type\":\"string\"},{\"name\":\"instance_name\",\"type\":\"string\",\"doc\":\"The instance's display name at receipt.\"},{\"name\":\"manager_instance\",\"type\":\"string\",\"doc\":\"The instance's name on the manager.\"},{\"name\":\"event\",\"type\":\"string\",\"doc\":\"The Evolution event name, e.g. messages.upsert.\"},{\"name\":\"digest\",\"type\":\"string\",\"doc\":\"SHA-256 (hex) of the envelope as posted; the ingest dedupe key.\"},{\"name\":\"payload\",\"type\":\"string\",\"doc\":\"The envelope as JSON, without apikey.\"}]}";
    export const InstanceEventReceivedName = "chatgateway.events.InstanceEventReceived";
    /**
     * An authenticated webhook event from an instance manager (Evolution API v2), as received. The manager's apikey is removed from the envelope before it is recorded.
     */
    export interface InstanceEventReceived {
        event_id: string;
        /**
         * Its own event id.
         */
        correlation_id: string;
        /**
         * When the gateway received it (epoch ms).
         */
        occurred_at: number;
        customer_id: string;
        instance_id: string;
        /**
         * The instance's display name at receipt.
         */
        instance_name: string;
        /**
         * The instance's name on the manager.
         */
        manager_instance: string;
        /**
         * The Evolution event name, e.g. messages.upsert.
         */
        event: string;
        /**
         * SHA-256 (hex) of the envelope as posted; the ingest dedupe key.
         */
        digest: string;
        /**
         * The envelope as JSON, without apikey.
         */
        payload: string;
    }
}
