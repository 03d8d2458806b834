// Generated from schemas/DeliveryFailed.avsc by libs/events/src/generate-types.ts (make events). Do not edit.
/* eslint-disable @typescript-eslint/no-namespace */

export type DeliveryFailed = ChatgatewayEvents.DeliveryFailed;

export namespace ChatgatewayEvents {
    export const DeliveryFailedSchema = "{\"type\":\"record\",\"name\":\"DeliveryFailed\",\"namespace\":\"chatgateway.events\",\"doc\":\"Sending through the instance failed after the policy checks passed.\",\"fields\":[{\"name\":\"event_id\",\"type\":\"string\"},{\"name\":\"correlation_id\",\"type\":\"string\"},{\"name\":\"occurred_at\",\"type\":\"long\"},{\"name\":\"customer_id\",\"type\":\"string\"},{\"name\":\"instance_id\",\"type\":\"string\"},{\"name\":\"message_id\",\"type\":\"string\"},{\"name\":\"log_id\",\"type\":\"long\"},{\"name\":\"reason\",\"type\":\"string\",\"doc\":\"unknown_number, manager_rejected, manager_unavailable, circuit_open, instance_not_found.\"},{\"name\":\"detail\",\"type\":\"string\"},{\"name\":\"definitive\",\"type\":\"boolean\",\"doc\":\"True when the message was certainly not sent.\"},{\"name\":\"recipient\",\"type\":\"string\",\"default\":\"\",\"doc\":\"The recipient (E.164), as the decision named it. Absent (decoded with their writer schema) or empty in records written before it was added.\"},{\"name\":\"message_purpose\",\"type\":\"string\",\"default\":\"\",\"doc\":\"The send's purpose, as the decision named it. Absent (decoded with their writer schema) or empty in records written before it was added.\"},{\"name\":\"instance_name\",\"type\":\"string\",\"default\":\"\",\"doc\":\"The instance's display name when the outcome was recorded. Absent (decoded with their writer schema) or empty in records written before it was added.\"}]}";
    export const DeliveryFailedName = "chatgateway.events.DeliveryFailed";
    /**
     * Sending through the instance failed after the policy checks passed.
     */
    export interface DeliveryFailed {
        event_id: string;
        correlation_id: string;
        occurred_at: number;
        customer_id: string;
        instance_id: string;
        message_id: string;
        log_id: number;
        /**
         * unknown_number, manager_rejected, manager_unavailable, circuit_open, instance_not_found.
         */
        reason: string;
        detail: string;
        /**
         * True when the message was certainly not sent.
         */
        definitive: boolean;
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
