package deploy_test

// imagePort is the port the Containerfile exposes and listens on
// (ERPGATE_LISTEN_ADDR=0.0.0.0:8080); the image test checks the image.
const imagePort = 8080
