// Generated from schemas/GatewayEventEmitted.avsc by libs/events/src/generate-types.ts (make events). Do not edit.
/* eslint-disable @typescript-eslint/no-namespace */

export type GatewayEventEmitted = ChatgatewayEvents.GatewayEventEmitted;

export namespace ChatgatewayEvents {
    export const GatewayEventEmittedSchema = "{\"type\":\"record\",\"name\":\"GatewayEventEmitted\",\"namespace\":\"chatgateway.events\",\"doc\":\"A gateway event of the customer webhook contract (section 6.3), derived from an instance event.\",\"fields\":[{\"name\":\"event_id\",\"type\":\"string\",\"doc\":\"Derived from the source event id and the output's position: a replay yields the same id.\"},{\"name\":\"correlation_id\",\"type\":\"string\",\"doc\":\"The source InstanceEventReceived's event id.\"},{\"name\":\"occurred_at\",\"type\":\"long\"},{\"name\":\"customer_id\",\"type\":\"string\"},{\"name\":\"instance_id\",\"type\":\"string\"},{\"name\":\"event\",\"type\":\"string\",\"doc\":\"The gateway event name, e.g. message.received.\"},{\"name\":\"payload\",\"type\":\"string\",\"doc\":\"The customer webhook body as JSON: event, instance_id, instance_name, timestamp and the event's extra fields.\"}]}";
    export const GatewayEventEmittedName = "chatgateway.events.GatewayEventEmitted";
    /**
     * A gateway event of the customer webhook contract (section 6.3), derived from an instance event.
     */
    export interface GatewayEventEmitted {
        /**
         * Derived from the source event id and the output's position: a replay yields the same id.
         */
        event_id: string;
        /**
         * The source InstanceEventReceived's event id.
         */
        correlation_id: string;
        occurred_at: number;
        customer_id: string;
        instance_id: string;
        /**
         * The gateway event name, e.g. message.received.
         */
        event: string;
        /**
         * The customer webhook body as JSON: event, instance_id, instance_name, timestamp and the event's extra fields.
         */
        payload: string;
    }
}
