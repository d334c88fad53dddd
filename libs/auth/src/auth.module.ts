import { DynamicModule, Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { CreateApiKeyHandler, DeleteApiKeyHandler, GetApiKeyHandler, ListApiKeysHandler, SetApiKeyEnabledHandler } from './application/api-keys';
import { CreateAppClientHandler, DeleteAppClientHandler, GetAppClientHandler, ListAppClientsHandler, UpdateAppClientHandler } from './application/app-clients';
import { AuthWriter } from './application/auth-writer';
import { Authenticator } from './application/authenticator';
import { Bootstrap } from './application/bootstrap';
import { KeyDigests } from './application/key-digests';
import { CorpusGrants } from './application/corpus-grants';
import { OAuthTokens } from './application/oauth';
import { AUTH_OPTIONS, AuthOptions, TokenService } from './application/tokens';
import { CreateUserHandler, DeleteUserHandler, GetUserHandler, ListUsersHandler, UpdateUserHandler } from './application/users';

/** Users, API keys, app clients and OAuth tokens: handlers plus the services the API's guard uses. */
@Module({})
export class AuthModule {
  static forRoot(options: AuthOptions): DynamicModule {
    return {
      module: AuthModule,
      imports: [CqrsModule],
      providers: [
        { provide: AUTH_OPTIONS, useValue: options },
        AuthWriter,
        TokenService,
        KeyDigests,
        CorpusGrants,
        Authenticator,
        OAuthTokens,
        Bootstrap,
        CreateUserHandler,
        UpdateUserHandler,
        DeleteUserHandler,
        GetUserHandler,
        ListUsersHandler,
        CreateApiKeyHandler,
        SetApiKeyEnabledHandler,
        DeleteApiKeyHandler,
        GetApiKeyHandler,
        ListApiKeysHandler,
        CreateAppClientHandler,
        UpdateAppClientHandler,
        DeleteAppClientHandler,
        GetAppClientHandler,
        ListAppClientsHandler,
      ],
      exports: [Authenticator, OAuthTokens, Bootstrap, TokenService],
    };
  }
}
