/** The poller's cursor (`sync_cursor.name`): where the last poll of the Service's call list stopped. */
export const POLL_CURSOR = 'calls';
