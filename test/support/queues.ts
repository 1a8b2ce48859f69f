/** What Queue.send resolves to, for a queue stub that accepted a message. */
export const sentMessage: QueueSendResponse = {
  metadata: { metrics: { backlogCount: 0, backlogBytes: 0, oldestMessageTimestamp: new Date() } },
};
