// Generated from schemas/AccountChanged.avsc by libs/events/src/generate-types.ts (make events). Do not edit.
/* eslint-disable @typescript-eslint/no-namespace */

export type AccountChanged = ChatgatewayEvents.AccountChanged;

export namespace ChatgatewayEvents {
    export const ChangeChannelSchema = "{\"type\":\"enum\",\"name\":\"ChangeChannel\",\"symbols\":[\"dashboard\",\"gatewayctl\"]}";
    export const ChangeChannelName = "chatgateway.events.ChangeChannel";
    export type ChangeChannel = "dashboard" | "gatewayctl";
    export const AccountChangedSchema = "{\"type\":\"record\",\"name\":\"AccountChanged\",\"namespace\":\"chatgateway.events\",\"doc\":\"A change to a customer's account (instances, API keys, webhooks, PBX integrations, members), made in the dashboard or by gatewayctl: the audit trail of who changed what. Never carries a secret.\",\"fields\":[{\"name\":\"event_id\",\"type\":\"string\"},{\"name\":\"correlation_id\",\"type\":\"string\",\"doc\":\"The request or command that made the change.\"},{\"name\":\"occurred_at\",\"type\":\"long\"},{\"name\":\"customer_id\",\"type\":\"string\"},{\"name\":\"instance_id\",\"type\":\"string\",\"doc\":\"The instance concerned, or empty.\"},{\"name\":\"action\",\"type\":\"string\",\"doc\":\"What changed, as <thing>.<verb>: customer.created, instance.created, api_key.revoked, webhook.configured, ...\"},{\"name\":\"subject_id\",\"type\":\"string\",\"doc\":\"The id of the thing changed (key id, instance id, integration id, user id).\"},{\"name\":\"by\",\"type\":\"string\",\"doc\":\"Who: the signed-in user's email in the dashboard, the operator's name in gatewayctl.\"},{\"name\":\"via\",\"type\":{\"type\":\"enum\",\"name\":\"ChangeChannel\",\"symbols\":[\"dashboard\",\"gatewayctl\"]}},{\"name\":\"details\",\"type\":\"string\",\"doc\":\"JSON object of the non-secret settings the change set (names, URLs, event lists), or {}.\"}]}";
    export const AccountChangedName = "chatgateway.events.AccountChanged";
    /**
     * A change to a customer's account (instances, API keys, webhooks, PBX integrations, members), made in the dashboard or by gatewayctl: the audit trail of who changed what. Never carries a secret.
     */
    export interface AccountChanged {
        event_id: string;
        /**
         * The request or command that made the change.
         */
        correlation_id: string;
        occurred_at: number;
        customer_id: string;
        /**
         * The instance concerned, or empty.
         */
        instance_id: string;
        /**
         * What changed, as <thing>.<verb>: customer.created, instance.created, api_key.revoked, webhook.configured, ...
         */
        action: string;
        /**
         * The id of the thing changed (key id, instance id, integration id, user id).
         */
        subject_id: string;
        /**
         * Who: the signed-in user's email in the dashboard, the operator's name in gatewayctl.
         */
        by: string;
        via: ChatgatewayEvents.ChangeChannel;
        /**
         * JSON object of the non-secret settings the change set (names, URLs, event lists), or {}.
         */
        details: string;
    }
}
