// Generated from schemas/MessageDispatched.avsc by libs/events/src/generate-types.ts (make events). Do not edit.
/* eslint-disable @typescript-eslint/no-namespace */

export type MessageDispatched = ChatgatewayEvents.MessageDispatched;

export namespace ChatgatewayEvents {
    export const MessageDispatchedSchema = "{\"type\":\"record\",\"name\":\"MessageDispatched\",\"namespace\":\"chatgateway.events\",\"doc\":\"The instance manager accepted the message for sending.\",\"fields\":[{\"name\":\"event_id\",\"type\":\"string\"},{\"name\":\"correlation_id\",\"type\":\"string\"},{\"name\":\"occurred_at\",\"type\":\"long\"},{\"name\":\"customer_id\",\"type\":\"string\"},{\"name\":\"instance_id\",\"type\":\"string\"},{\"name\":\"message_id\",\"type\":\"string\"},{\"name\":\"log_id\",\"type\":\"long\"},{\"name\":\"provider_message_id\",\"type\":\"string\",\"doc\":\"key.id from the instance manager.\"},{\"name\":\"provider_status\",\"type\":\"string\"},{\"name\":\"recipient\",\"type\":\"string\",\"default\":\"\",\"doc\":\"The recipient (E.164), as the decision named it. Absent (decoded with their writer schema) or empty in records written before it was added.\"},{\"name\":\"message_purpose\",\"type\":\"string\",\"default\":\"\",\"doc\":\"The send's purpose, as the decision named it. Absent (decoded with their writer schema) or empty in records written before it was added.\"},{\"name\":\"instance_name\",\"type\":\"string\",\"default\":\"\",\"doc\":\"The instance's display name when the outcome was recorded. Absent (decoded with their writer schema) or empty in records written before it was added.\"}]}";
    export const MessageDispatchedName = "chatgateway.events.MessageDispatched";
    /**
     * The instance manager accepted the message for sending.
     */
    export interface MessageDispatched {
        event_id: string;
        correlation_id: string;
        occurred_at: number;
        customer_id: string;
        instance_id: string;
        message_id: string;
        log_id: number;
        /**
         * key.id from the instance manager.
         */
        provider_message_id: string;
        provider_status: string;
        /**
         * The recipient (E.164), as the decision named it. Absent (decoded with their writer schema) or empty in records written before it was added.
         *
         * Default: ""
         */
        recipient: string;
        /**
         * The send's purpose, as the decision named it. Absent (decoded with their writer schema) or empty in records written before it was added.
         *
         * Default: ""
         */
        message_purpose: string;
        /**
         * The instance's display name when the outcome was recorded. Absent (decoded with their writer schema) or empty in records written before it was added.
         *
         * Default: ""
         */
        instance_name: string;
    }
}
