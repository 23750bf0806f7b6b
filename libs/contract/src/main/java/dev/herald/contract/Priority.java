package dev.herald.contract;

/**
 * Delivery urgency. Each priority has its own queue (lane) so a bulk campaign never delays a
 * transactional push.
 */
public enum Priority { high, normal }
