export { ConfigError } from './config-error.js';
export { requestLogRetentionMs } from './check-references.js';
export {
  loadCommonConfig,
  loadConfig,
  runtimeUpstream,
  type CommonConfig,
  type LoadConfigOptions,
  type LoadedCommonConfig,
  type LoadedConfig,
  type UpstreamIdentity,
} from './load-config.js';
export {
  COMMON_UPSTREAM_KEYS,
  MODEL_TYPES,
  PROVIDER_KINDS,
  ROUTING_STRATEGIES,
  type ModelConfig,
  type ModelType,
  type NetworkConfig,
  type ProxyRoute,
  type ResolvedNetwork,
  type ProviderKind,
  type RouteConfig,
  type RoutingConfig,
  type RoutingStrategy,
  type SwitchyardConfig,
  type UpstreamConfig,
} from './config-schema.js';
export { endpointKey, endpointOf, groupEndpoints, type EndpointConfig, type EndpointGroup } from './upstream-endpoints.js';
export { DIRECT } from './resolve-network.js';
export { configChanges, reloadedConfig, type ConfigChanges } from './config-changes.js';
