package cluster

// The names a cluster uses on NATS, all in one place (README "Cluster"
// lists them too). Every name is fixed: nodes of one cluster agree on them
// without configuration, and a second cluster lives in its own NATS
// account (or its own NATS deployment), never beside the first under other
// names.
const (
	// DefaultClusterName is the cluster's name when Config.ClusterName is
	// empty; it names the embedded servers' NATS cluster too.
	DefaultClusterName = "palyra"

	// OpsStream is the JetStream stream of lifecycle changes, the
	// cluster's one replicated truth: every node applies it in order to
	// its local state. Subjects: OpsSubjectPrefix + the op kind.
	OpsStream = "PALYRA_OPS"
	// OpsSubjectPrefix prefixes the ops' subjects (palyra.ops.install, ...).
	OpsSubjectPrefix = "palyra.ops."

	// ArtifactStore is the JetStream object store of installed artifacts,
	// keyed by the artifact's sha256 (lower-case hex).
	ArtifactStore = "PALYRA_ARTIFACTS"

	// StorageBucket is the JetStream key-value bucket of the skills'
	// storage capability when clustered.
	StorageBucket = "PALYRA_STORAGE"

	// SecretsBucket is the JetStream key-value bucket of the vault's
	// sealed entries: each node publishes what `palyra secrets set` and
	// `delete` change in its vault, and imports the others' ciphertext
	// into its own vault when its own key opens it (the key never
	// travels). Keys: the secret's name in lower-case hex.
	SecretsBucket = "PALYRA_SECRETS"

	// EventsStream is the JetStream stream of the cluster's lifecycle and
	// hook events (GET /v1/events on any node reads it). Subjects:
	// EventsSubjectPrefix + the event kind.
	EventsStream = "PALYRA_EVENTS"
	// EventsSubjectPrefix prefixes the events' subjects.
	EventsSubjectPrefix = "palyra.events."
	// HooksConsumer is the durable consumer on EventsStream that every
	// node pulls from: each event is delivered to one node, which fires
	// the hooks bound to it, so hooks run once per cluster.
	HooksConsumer = "palyra-hooks"

	// ServiceName is the NATS micro service every node registers ($SRV.PING,
	// $SRV.INFO and $SRV.STATS answer for it).
	ServiceName = "palyra"
	// CallSubjectPrefix prefixes the call endpoints: a node that serves
	// skill S answers CallSubjectPrefix+S in queue group CallQueueGroup.
	CallSubjectPrefix = "palyra.call."
	// CallQueueGroup is the queue group of every call endpoint.
	CallQueueGroup = "palyra"

	// HeartbeatSubjectPrefix prefixes each node's heartbeat
	// (palyra.node.<node>.heartbeat): its status, every HeartbeatInterval.
	HeartbeatSubjectPrefix = "palyra.node."
)

// Names of the events stream's messages.
const (
	// HeaderOpSeq is the header of an event published for an op: the op's
	// sequence in OpsStream. A node that starts reads it from the last
	// stored events to skip the ops whose events are stored already.
	HeaderOpSeq = "Palyra-Op-Seq"
	// HeaderNode is the header naming the node that published an event.
	HeaderNode = "Palyra-Node"
	// HooksFilterSubject is what HooksConsumer reads of EventsStream: the
	// skill lifecycle events, the ones hooks bind to (hook outcomes and
	// other events never fire hooks).
	HooksFilterSubject = EventsSubjectPrefix + "skill.>"
)

// NodeCallInfix builds the subject a node answers calls of skill on, outside
// the queue group: a caller that retries a call no node accepted sends the
// retry to a named live peer there, so that it goes to another responder.
// HeartbeatSubjectPrefix+<node>+NodeCallInfix+<skill>.
const NodeCallInfix = ".call."

// HeartbeatSuffix ends each node's heartbeat subject:
// HeartbeatSubjectPrefix+<node>+HeartbeatSuffix.
const HeartbeatSuffix = ".heartbeat"
