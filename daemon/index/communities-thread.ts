/**
 * Detects a large graph's communities on a thread of its own while the build writes the rest of its
 * index (the local store awaits them last: a PendingDelta). On 2 cores clustering Go's src took
 * 1.5-3.5 s of a full build's serial tail with the other core idle. One request per thread: it
 * exits when it has answered, and the memory the clustering took goes with it.
 */
import { isMainThread, parentPort, workerData } from "node:worker_threads";
import { log } from "../../shared/log.js";
import { threadReply } from "../thread-reply.js";
import { clusterCommunities, clusterEdges, type ClusterEdges, type CommunityNode, type CommunityResult } from "./communities.js";
import { testClassifier } from "./test-code.js";
import type { GraphCommunity, GraphEdge } from "./types.js";

/**
 * The nodes as columns and the edges by node index in typed arrays, moved rather than copied: Go's
 * src as objects was a 40 MB copy that took the build thread 0.8 s to make and the clustering
 * thread 1.4 s to read.
 */
interface Request extends ClusterEdges {
  ids: string[];
  names: string[];
  types: string[];
  /** Each node's file, an index into `files`. */
  fileOf: Int32Array;
  files: string[];
  testPatterns: string[];
}

interface Reply {
  /** Each node's community, by index. */
  community?: Int32Array;
  communities?: GraphCommunity[];
  error?: string;
}

/** detectCommunities on a thread; should the thread fail, on this one (the same result, only later). */
export function detectCommunitiesApart(nodes: CommunityNode[], edges: GraphEdge[], testPatterns: string[]): Promise<CommunityResult> {
  const request = requestOf(nodes, edges, testPatterns);
  const ids = request.ids;
  const result = (community: Int32Array, communities: GraphCommunity[]): CommunityResult => ({ communityOf: new Map(ids.map((id, i) => [id, community[i]])), communities });
  // The fallback reads the request's arrays, which go to the thread: it keeps copies (not `nodes` nor `edges`).
  const kept: Request = { ...request, fileOf: request.fileOf.slice(), source: request.source.slice(), target: request.target.slice(), weight: request.weight.slice() };
  const transfer = [request.fileOf.buffer, request.source.buffer, request.target.buffer, request.weight.buffer] as ArrayBuffer[];
  return threadReply<Reply>(new URL("./communities-thread.js", import.meta.url), request, "the clustering thread", transfer)
    .then((r) => {
      if (r.error !== undefined) throw new Error(r.error);
      return result(r.community!, r.communities!);
    })
    .catch((err: Error) => {
      log.warn("detecting communities on a thread failed; detecting them here", { error: err.message });
      const here = clusterCommunities(nodesOf(kept), kept, testClassifier(testPatterns));
      return result(here.community, here.communities);
    });
}

function nodesOf({ ids, names, types, fileOf, files }: Request): CommunityNode[] {
  return ids.map((id, i) => ({ id, name: names[i], type: types[i], file_path: files[fileOf[i]] }));
}

function requestOf(nodes: CommunityNode[], edges: GraphEdge[], testPatterns: string[]): Request {
  const files: string[] = [];
  const fileIndex = new Map<string, number>();
  const fileOf = new Int32Array(nodes.length);
  for (const [i, n] of nodes.entries()) {
    let f = fileIndex.get(n.file_path);
    if (f === undefined) fileIndex.set(n.file_path, (f = files.push(n.file_path) - 1));
    fileOf[i] = f;
  }
  return { ids: nodes.map((n) => n.id), names: nodes.map((n) => n.name), types: nodes.map((n) => n.type), fileOf, files, ...clusterEdges(nodes, edges), testPatterns };
}

if (!isMainThread && (workerData as Partial<Request> | undefined)?.fileOf) {
  const request = workerData as Request;
  try {
    const { community, communities } = clusterCommunities(nodesOf(request), request, testClassifier(request.testPatterns));
    parentPort!.postMessage({ community, communities } satisfies Reply, [community.buffer as ArrayBuffer]);
  } catch (err) {
    parentPort!.postMessage({ error: (err as Error).message } satisfies Reply);
  }
}
