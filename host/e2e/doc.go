// Package e2e holds end-to-end tests of the capability path: the example
// skills (sdk/examples) and test guests run in real palyra-sidecar
// processes, their capability calls cross go-plugin's GRPCBroker to the
// host's broker, which talks to real HTTP servers on 127.0.0.1, the real
// vault and the real SQLite store of a fresh state directory. It has no
// non-test code.
package e2e
