import { Inject, Injectable } from '@nestjs/common';
import { OutboundHttp, SERVICE_CONFIG, ServiceConfig, TOOLS_OUTBOUND_HTTP } from '@lib/platform';
import type { ConnectorType } from '../domain/connector';
import { ConnectorPlatform, connectorPlatformSettings, ConnectorPlatformSet, ConnectorPlatformSettings } from '../application/connectors/connector-platform.port';
import { GoogleChatPlatform } from './gchat/gchat';
import { SlackPlatform } from './slack/slack';
import { ZoomPlatform } from './zoom/zoom';

/** The platforms, built once per process on the guarded outbound client (bound to `CONNECTOR_PLATFORMS`). */
@Injectable()
export class ConnectorPlatforms implements ConnectorPlatformSet {
  readonly settings: ConnectorPlatformSettings;
  private readonly byType: Record<ConnectorType, ConnectorPlatform>;

  constructor(@Inject(TOOLS_OUTBOUND_HTTP) outbound: OutboundHttp, @Inject(SERVICE_CONFIG) config: ServiceConfig) {
    this.settings = connectorPlatformSettings(config.env);
    this.byType = { slack: new SlackPlatform(this.settings, outbound.fetch), gchat: new GoogleChatPlatform(this.settings, outbound.fetch), zoom: new ZoomPlatform(outbound.fetch) };
  }

  of(type: ConnectorType): ConnectorPlatform {
    return this.byType[type];
  }
}
