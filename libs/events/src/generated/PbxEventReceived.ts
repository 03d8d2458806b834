// Generated from schemas/PbxEventReceived.avsc by libs/events/src/generate-types.ts (make events). Do not edit.
/* eslint-disable @typescript-eslint/no-namespace */

export type PbxEventReceived = ChatgatewayEvents.PbxEventReceived;

export namespace ChatgatewayEvents {
    export const PbxEventReceivedSchema = "{\"type\":\"record\",\"name\":\"PbxEventReceived\",\"namespace\":\"chatgateway.events\",\"doc\":\"An authenticated PBX webhook event, as received. A sending event is followed on the same stream by the SendRequested it became.\",\"fields\":[{\"name\":\"event_id\",\"type\":\"string\"},{\"name\":\"correlation_id\",\"type\":\"string\",\"doc\":\"The command id of the send it became, or its own id.\"},{\"name\":\"occurred_at\",\"type\":\"long\"},{\"name\":\"customer_id\",\"type\":\"string\"},{\"name\":\"instance_id\",\"type\":\"string\"},{\"name\":\"integration_id\",\"type\":\"int\"},{\"name\":\"event_type\",\"type\":\"string\"},{\"name\":\"payload\",\"type\":\"string\",\"doc\":\"The request body as JSON.\"},{\"name\":\"action\",\"type\":\"string\",\"doc\":\"send, record or acknowledge.\"}]}";
    export const PbxEventReceivedName = "chatgateway.events.PbxEventReceived";
    /**
     * An authenticated PBX webhook event, as received. A sending event is followed on the same stream by the SendRequested it became.
     */
    export interface PbxEventReceived {
        event_id: string;
        /**
         * The command id of the send it became, or its own id.
         */
        correlation_id: string;
        occurred_at: number;
        customer_id: string;
        instance_id: string;
        integration_id: number;
        event_type: string;
        /**
         * The request body as JSON.
         */
        payload: string;
        /**
         * send, record or acknowledge.
         */
        action: string;
    }
}
