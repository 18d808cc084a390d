/**
 * `npm ci`'s one line about Node (through `prepare`): when npm runs on a system Node older
 * than 24, which dlsync needs, it says that dlsync runs on the Node 24 that `npm ci`
 * installed in node_modules/node (bin/dlsync.js switches to it). Nothing otherwise.
 *
 * npm runs this script on the Node of node_modules/.bin; npm's own Node is in the user
 * agent it hands its scripts ("npm/11.19.1 node/v20.20.2 linux x64 …").
 */
const npmNode = /\bnode\/(v(\d+)\.\S+)/.exec(process.env.npm_config_user_agent ?? "")

if (npmNode !== null && Number(npmNode[2]) < 24) {
  console.log(
    `dlsync runs on Node ${process.version} from node_modules/node: this system's Node ${npmNode[1]} is older than the 24 it needs.`
  )
}
