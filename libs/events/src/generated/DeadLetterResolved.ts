// Generated from schemas/DeadLetterResolved.avsc by libs/events/src/generate-types.ts (make events). Do not edit.
/* eslint-disable @typescript-eslint/no-namespace */

export type DeadLetterResolved = ChatgatewayEvents.DeadLetterResolved;

export namespace ChatgatewayEvents {
    export const DeadLetterResolutionSchema = "{\"type\":\"enum\",\"name\":\"DeadLetterResolution\",\"symbols\":[\"retried\",\"discarded\"]}";
    export const DeadLetterResolutionName = "chatgateway.events.DeadLetterResolution";
    export type DeadLetterResolution = "retried" | "discarded";
    export const DeadLetterResolvedSchema = "{\"type\":\"record\",\"name\":\"DeadLetterResolved\",\"namespace\":\"chatgateway.events\",\"doc\":\"An operator's resolution of a dead letter: retried (the original record appended again to its topic) or discarded.\",\"fields\":[{\"name\":\"event_id\",\"type\":\"string\"},{\"name\":\"correlation_id\",\"type\":\"string\",\"doc\":\"The dead letter's id.\"},{\"name\":\"occurred_at\",\"type\":\"long\"},{\"name\":\"customer_id\",\"type\":\"string\",\"doc\":\"As on the dead letter.\"},{\"name\":\"instance_id\",\"type\":\"string\",\"doc\":\"Empty.\"},{\"name\":\"dead_letter_id\",\"type\":\"string\"},{\"name\":\"resolution\",\"type\":{\"type\":\"enum\",\"name\":\"DeadLetterResolution\",\"symbols\":[\"retried\",\"discarded\"]},\"doc\":\"What the operator did: appended the record again, or dropped it.\"},{\"name\":\"by\",\"type\":\"string\"},{\"name\":\"reason\",\"type\":\"string\"}]}";
    export const DeadLetterResolvedName = "chatgateway.events.DeadLetterResolved";
    /**
     * An operator's resolution of a dead letter: retried (the original record appended again to its topic) or discarded.
     */
    export interface DeadLetterResolved {
        event_id: string;
        /**
         * The dead letter's id.
         */
        correlation_id: string;
        occurred_at: number;
        /**
         * As on the dead letter.
         */
        customer_id: string;
        /**
         * Empty.
         */
        instance_id: string;
        dead_letter_id: string;
        /**
         * What the operator did: appended the record again, or dropped it.
         */
        resolution: ChatgatewayEvents.DeadLetterResolution;
        by: string;
        reason: string;
    }
}
