// Types of supported-node.js, which stays JavaScript so that it runs before anything is built or loaded.
export declare const SUPPORTED_NODE_RANGE: string;
export declare function isSupportedNode(version: string): boolean;
export declare function unsupportedNodeMessage(version: string): string;
