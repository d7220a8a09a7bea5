// Types of core-order.mjs, for the tests that read the table and the graph.
export type CoreNode = string;

export interface CoreEdge {
  from: CoreNode;
  to: CoreNode;
  /** "hub/relay.ts -> protocol/messages.ts", one an import. */
  files: string[];
  /** Every import on this edge is `import type` / `export type`. */
  typeOnly: boolean;
}

export interface CoreGraph {
  files: number;
  nodes: CoreNode[];
  edges: CoreEdge[];
}

export const CORE_LAYERS: CoreNode[][];
export const CORE_ORDER: CoreNode[];
export function layerOf(node: CoreNode): number | undefined;
export function mayImport(from: CoreNode, to: CoreNode): boolean;
export function foldersAfter(folder: CoreNode): CoreNode[];
export function coreGraph(root: string): CoreGraph;
export function cycles(graph: CoreGraph): { nodes: CoreNode[]; edges: CoreEdge[] }[];
export function orderViolations(graph: CoreGraph): CoreEdge[];
export function unplaced(graph: CoreGraph): CoreNode[];
