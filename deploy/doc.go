// Package deploy holds the tests of erpgate's deployment artifacts: the
// container image (../Containerfile, image/build), the Kubernetes manifests
// (kubernetes/), the systemd unit (systemd/) and the reverse-proxy example.
//
// It is its own module so that the Kubernetes API packages its tests decode
// the manifests with stay out of erpgate's dependencies. It uses erpgate's
// own packages (platform/infra/config, platform/infra/pgtest) through a replace
// directive. Run it with `go tool task test:deploy` (part of `test`).
package deploy
