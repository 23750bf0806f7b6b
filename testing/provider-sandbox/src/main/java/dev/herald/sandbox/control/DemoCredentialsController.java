package dev.herald.sandbox.control;

import dev.herald.sandbox.SandboxPorts;
import dev.herald.sandbox.apns.ApnsCertificate;
import dev.herald.sandbox.demo.DemoCredentials;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/** Hands out what a client needs to talk to the sandbox: demo credentials and the APNs certificate. */
@RestController
@RequestMapping("/sandbox")
class DemoCredentialsController {
    private static final MediaType PEM = MediaType.parseMediaType("application/x-pem-file");

    private final DemoCredentials demo;
    private final SandboxPorts ports;
    private final ApnsCertificate certificate;

    DemoCredentialsController(DemoCredentials demo, SandboxPorts ports, ApnsCertificate certificate) {
        this.demo = demo;
        this.ports = ports;
        this.certificate = certificate;
    }

    @GetMapping("/demo-credentials")
    Map<String, Object> demoCredentials() {
        Map<String, Object> credentials = new LinkedHashMap<>();
        credentials.put("fcm", Map.of("serviceAccount", demo.serviceAccount(ports.tokenUri())));
        credentials.put("apns", demo.apns());
        return credentials;
    }

    @GetMapping("/apns-certificate.pem")
    ResponseEntity<String> apnsCertificate() {
        return ResponseEntity.ok().contentType(PEM).body(certificate.pem());
    }
}
