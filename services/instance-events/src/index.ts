export { startInstanceEventsService } from './service.ts';
export { mapInstanceEvent, matchKeyword, phoneFromJid, type GatewayEvent, type MapContext, type Mapped } from './map-event.ts';
