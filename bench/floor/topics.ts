/** The floor's topics, one per hop of the send path it stands for. */
export const floorTopics = (prefix: string) => ({
  requests: `${prefix}floor-requests`,
  decisions: `${prefix}floor-decisions`,
  outcomes: `${prefix}floor-outcomes`,
  instanceEvents: `${prefix}floor-instance-events`,
});

export const FLOOR_ID_HEADER = 'floor-id';
